"""The co-design editors: one ipywidgets panel per spec section, bound to a session."""
