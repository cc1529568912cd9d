; Added by moot to tree-sitter-python's own queries/tags.scm, which the grammar wheel ships and
; which counts only calls as references. A module also depends on the names it imports,
; subclasses, decorates with and writes in type annotations; these patterns count those too,
; so the repository map ranks a module by all the code that uses it.

(import_from_statement
  name: [
    (dotted_name (identifier) @name)
    (aliased_import name: (dotted_name (identifier) @name))
  ]) @reference.import

(class_definition
  superclasses: (argument_list
    [
      (identifier) @name
      (attribute attribute: (identifier) @name)
    ])) @reference.class

(decorator
  [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ]) @reference.call

(type
  [
    (identifier) @name
    (attribute attribute: (identifier) @name)
    (generic_type (identifier) @name)
  ]) @reference.type

(type
  (binary_operator
    [
      left: (identifier) @name
      right: (identifier) @name
      left: (binary_operator [left: (identifier) @name right: (identifier) @name])
    ])) @reference.type
