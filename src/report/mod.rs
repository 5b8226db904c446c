//! Reporters: each renders a [`crate::summary::Summary`] to a writer.
