"""Register and occupancy estimates: GPU profiles (:mod:`.targets`), the
occupancy model (:mod:`.occupancy`) and exact figures from ptxas (:mod:`.ptxas`)."""
