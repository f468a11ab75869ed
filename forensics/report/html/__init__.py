"""Self-contained HTML pages: one log (``classify --format html``,
``log_page``) and a batch table (``report --html``, ``batch_page``). Needs the
``html`` extra (matplotlib draws the charts as SVG; ``charts`` says why)."""
