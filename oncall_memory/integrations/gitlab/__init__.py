"""GitLab: incident issues (and issues labelled as incidents) as a source."""
