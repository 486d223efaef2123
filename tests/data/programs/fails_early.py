import json

with open("a-data-set-that-is-not-there.json") as handle:
    data = json.load(handle)
