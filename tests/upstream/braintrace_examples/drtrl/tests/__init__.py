# examples/drtrl/tests/__init__.py
