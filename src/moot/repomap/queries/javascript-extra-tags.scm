; Added by moot to tree-sitter-javascript's own queries/tags.scm (shipped in the grammar wheel):
; a base class is a reference. JavaScript only: TypeScript's grammar nests it in an
; `extends_clause` (see typescript-extra-tags.scm), where this pattern would not compile.

(class_heritage (identifier) @name) @reference.class
