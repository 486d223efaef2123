# examples/pp_prop/tests/__init__.py
