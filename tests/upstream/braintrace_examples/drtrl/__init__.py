# examples/drtrl/__init__.py
