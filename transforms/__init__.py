"""Composable transformations (installed as ``funcgrad.transforms``)."""
