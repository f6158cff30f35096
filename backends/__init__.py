"""Array backends (installed as ``funcgrad.backends``)."""
