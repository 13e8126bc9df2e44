"""Frames and recordings in other engines' formats: the Prometheus endpoint and OpenMetrics files.

`promnames` holds the one mapping from our metric catalog to Prometheus names; `prometheus` serves
it live (/metrics), `openmetrics` writes a recording with timestamps for backfilling.
"""
