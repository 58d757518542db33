"""The run report: pyserq 0.1.2's object graph, its exact JSON text, a text report for people,
and CSV dumps of the observations.

* :class:`Report`, :class:`Observe`, :class:`Gauge`, :class:`Stage`, :class:`Pool`
  (:mod:`serq.report.model`); ``Report.json()`` is the reference's text byte for byte
  (:mod:`serq.report.json`).
* :func:`format_text` (:mod:`serq.report.text`): the report as aligned tables.
* :func:`dump_csv` (:mod:`serq.report.dump`): one ``time,session,turn,value`` file per
  observation.
"""
from serq.report.claims import ClaimResult
from serq.report.dump import dump_csv, dump_parquet
from serq.report.model import (POOL_FIELDS, REPORT_VERSION, SERQ_VERSION, STAGE_FIELDS, Gauge,
                               Observe, Pool, Report, Stage)
from serq.report.text import format_text

__all__ = ["ClaimResult", "Report", "Observe", "Gauge", "Stage", "Pool", "format_text", "dump_csv", "dump_parquet",
           "SERQ_VERSION", "REPORT_VERSION", "STAGE_FIELDS", "POOL_FIELDS"]
