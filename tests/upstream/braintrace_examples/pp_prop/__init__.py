# examples/pp_prop/__init__.py
