"""Tools: the registry, schemas and augmentations, the execution environment and the tools themselves."""
