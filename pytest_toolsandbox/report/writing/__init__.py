"""Writing the report directory: the controller-side collector, atomic scrubbed writes, owned files, outputs."""
