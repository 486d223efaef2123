import brainstate

print("nothing to train here", brainstate.__name__)
