"""team_suite/ is a team's own test folder, data for test_team_suite.py: that test copies it out
of the repository and runs it there with pytest, as the team would. It is not collected here."""

collect_ignore = ["team_suite"]
