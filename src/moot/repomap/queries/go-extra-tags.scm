; Added by moot to tree-sitter-go's own queries/tags.scm (shipped in the grammar wheel), which
; captures package-level constants and variables without marking them as definitions, and
; counts a selector (`pkg.Name`) as a reference only when it is called.

(source_file
  (const_declaration (const_spec name: (identifier) @name) @definition.constant))

(source_file
  (var_declaration (var_spec name: (identifier) @name) @definition.variable))

(selector_expression field: (field_identifier) @name) @reference.field
