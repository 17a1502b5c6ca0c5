"""The `workbench` command line: validate, describe and profile specs (more commands join later)."""
