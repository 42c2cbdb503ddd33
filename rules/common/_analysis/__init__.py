"""What several frameworks' rules share: Poplar flags, legacy APIs, pipeline arithmetic."""
