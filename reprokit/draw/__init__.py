"""Drawing primitives, at the bottom of the control plane: SVG marks and scales (``svg``), tables, figures and
titled blocks (``tables``), in Markdown and HTML. They know no step kind and no record; the report
(``reprokit/report/``) and the kinds' sections (``reprokit/report/kind_sections/``) draw with them."""
