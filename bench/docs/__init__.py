"""The docs renderer: every measured figure, chart and generated reference page, from one place."""
