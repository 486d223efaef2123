import os
import sys

# tests import their shared helpers as a plain module
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
