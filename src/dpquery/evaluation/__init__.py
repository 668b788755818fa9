"""Evaluation: error metrics and reports."""

from dpquery.evaluation.metrics import ErrorReport, error_report

__all__ = ["ErrorReport", "error_report"]
