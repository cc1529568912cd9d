; Added by moot to tree-sitter-rust's own queries/tags.scm (shipped in the grammar wheel), which
; counts only calls of plain or method names, macros and `impl` targets as references. These
; patterns also count paths (`Config::new`, `core::helper()`), type names and `use`d names, and
; make constants and statics definitions.

(const_item name: (identifier) @name) @definition.constant

(static_item name: (identifier) @name) @definition.constant

(scoped_identifier
  path: (identifier) @name) @reference.path

(scoped_identifier
  name: (identifier) @name) @reference.path

(type_identifier) @name @reference.type

(use_list (identifier) @name) @reference.import
