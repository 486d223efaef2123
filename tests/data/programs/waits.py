"""Waits (a long data download, say) before it would compile anything."""
import time

print("ready", flush=True)
time.sleep(600)
