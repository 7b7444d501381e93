"""Reporting: the README's measured blocks (``readme``), the paper's render (``paper``), the
table of stage times (``stage_times``), the comparison of two builds (``rebuild``) and of two
runs (``rerun``), the clock of a whole ``make repro`` (``repro_clock``) and the check of the
opt-in pipeline's outputs (``opt_in``)."""
