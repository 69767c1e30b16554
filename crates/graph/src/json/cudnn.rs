//! Reader for the cuDNN frontend's own serialized SDPA graphs.
