"""fairot.face: fair face recognition with MBN's meta-learned group margins (PyTorch)."""
