"""Imports every built-in capability module so that each registers itself."""
