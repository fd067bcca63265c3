"""SQL fragments more than one query module writes the same way."""

# How a series is named on a page: benchmark · metric · framework · device · params.
SERIES_LABEL = (
    "concat_ws(' · ', s.benchmark, s.metric, s.framework, nullif(s.device, ''),"
    " nullif(s.params::VARCHAR, '{}'))"
)


# Each milestone with its phase (name, project, unit) and the value before it: the step
# the milestone made. A CTE body: `WITH steps AS ({MILESTONE_STEPS})`.
MILESTONE_STEPS = """
    SELECT ms.*, p.name AS phase, p.project, p.unit,
           lag(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)
               AS before
    FROM milestones ms JOIN phases p USING (phase_id)
"""
