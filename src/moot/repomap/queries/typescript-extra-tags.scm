; Added by moot to the TypeScript and TSX tags queries. Upstream, tree-sitter-typescript's
; queries/tags.scm holds only what TypeScript adds and is used together with
; tree-sitter-javascript's; moot does the same, and adds these patterns: type aliases and
; enums as definitions, and every type name, base class and implemented interface as a
; reference.

(type_alias_declaration name: (type_identifier) @name) @definition.type

(enum_declaration name: (identifier) @name) @definition.enum

(extends_clause value: (identifier) @name) @reference.class

(type_identifier) @name @reference.type
