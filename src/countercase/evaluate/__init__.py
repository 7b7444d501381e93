"""The evaluation harness: collections, runs, measures, significance, regression files."""
