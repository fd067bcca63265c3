"""SQL fragments more than one query module writes the same way."""

# How a series is named on a page: benchmark · metric · framework · device · params.
SERIES_LABEL = (
    "concat_ws(' · ', s.benchmark, s.metric, s.framework, nullif(s.device, ''),"
    " nullif(s.params::VARCHAR, '{}'))"
)
