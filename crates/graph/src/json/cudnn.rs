//! Reader for the cuDNN frontend's own serialized SDPA graphs (see [`from_str`]).
