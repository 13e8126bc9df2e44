"""One widget per pane, plus the chart, header and the line-diffing base they draw with."""
