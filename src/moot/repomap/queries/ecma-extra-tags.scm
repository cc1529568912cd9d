; Added by moot to the JavaScript, TypeScript and TSX tags queries. tree-sitter-javascript's own
; queries/tags.scm (shipped in the grammar wheel) counts only calls and `new` as references, and
; only functions, classes and methods as definitions. These patterns also count imported names
; as references and top-level constants as definitions. (A constant whose value is a function
; is matched by both; moot keeps the function.)

(import_specifier name: (identifier) @name) @reference.import

(import_clause (identifier) @name) @reference.import

(program
  (lexical_declaration
    (variable_declarator name: (identifier) @name) @definition.constant))

(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator name: (identifier) @name) @definition.constant)))
