"""The confirmatory validity experiment (issue 44): written down before it runs
(``docs/preregistration/validity_v2.md``), on fresh held-out cases."""
