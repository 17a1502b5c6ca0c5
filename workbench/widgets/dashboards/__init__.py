"""The dashboards served by Voilà: co-design app, spec review and release review."""
