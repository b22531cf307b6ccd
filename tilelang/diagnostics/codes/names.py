"""Error codes of the `names` range (see `codes/__init__.py` for the ranges).

Emitted by the semantic checker (`tilelang.sema`): modules, imports, name
resolution, arity, duplicates, mutability of bindings.
"""

from tilelang.diagnostics.codes import define

UNKNOWN_NAME = define("E0101", "unknown-name", "a value name that is not defined in scope")
UNKNOWN_FUNCTION = define("E0102", "unknown-function", "a called function that is not defined")
UNKNOWN_METHOD = define("E0103", "unknown-method", "a method that does not exist on the receiver's type")
UNKNOWN_TYPE = define("E0104", "unknown-type", "a type name that is not defined")
WRONG_ARG_COUNT = define("E0105", "wrong-arg-count", "a call with the wrong number of arguments")
DUPLICATE_DEFINITION = define("E0106", "duplicate-definition", "a name defined twice in one scope")
UNKNOWN_KEYWORD = define("E0107", "unknown-keyword-arg", "a keyword argument the callee does not take")
ASSIGN_IMMUTABLE = define("E0108", "assign-to-immutable", "assignment to a binding not declared `mut`")
UNRESOLVED_MODULE = define("E0109", "unresolved-module", "`use` of a module that does not exist")
UNRESOLVED_IMPORT = define("E0110", "unresolved-import", "`use` of an item a module does not define")
WRONG_GENERIC_COUNT = define("E0111", "wrong-generic-count", "a turbofish with the wrong number of generic arguments")
UNKNOWN_ATTRIBUTE = define("E0112", "unknown-attribute", "an attribute or hint tilec does not know")
LOOP_CONTROL_OUTSIDE_LOOP = define("E0113", "break-outside-loop", "`break` or `continue` outside a loop")
INVALID_ASSIGN_TARGET = define("E0114", "invalid-assign-target", "assignment to something that is not a variable")
NOT_CALLABLE = define("E0115", "not-callable", "a call of something that is not a function")
SELF_IMPORT = define("E0117", "self-import", "a file that `use`s itself")
USE_BEFORE_INIT = define("E0118", "use-before-init",
                         "a binding declared without a value, read before every path assigns it")
INVALID_MAIN = define("E0116", "invalid-main", "a `main` that takes parameters, returns a value or is a kernel")
