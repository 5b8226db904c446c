//! WHAT one operation is: one file per protocol.
