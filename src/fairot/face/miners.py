"""Triplet miners: return index tuples, never losses (pytorch-metric-learning's split)."""

from ._miners import HardestTripletMiner, TripletIndices, squared_distances

__all__ = ["HardestTripletMiner", "TripletIndices", "squared_distances"]
