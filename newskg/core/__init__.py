"""The ground every stage stands on: settings, ids, time axes and the shared records."""
