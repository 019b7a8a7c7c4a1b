//! [`Shared`]: a `Cell` that a fault hook (which must be `Send`, `engine/src/fault.rs`) and
//! the test that installed it both read and write.

use std::sync::{Arc, Mutex, PoisonError};

/// A copyable value shared between clones, like `Rc<Cell<T>>` but `Send`: the engine may
/// run a hook on a helper thread (a bulk build's log writer).
#[derive(Clone, Debug, Default)]
pub struct Shared<T: Copy>(Arc<Mutex<T>>);

impl<T: Copy> Shared<T> {
    /// A new value.
    pub fn new(v: T) -> Self {
        Shared(Arc::new(Mutex::new(v)))
    }

    /// The value.
    pub fn get(&self) -> T {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the value.
    pub fn set(&self, v: T) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = v;
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;

    #[test]
    fn clones_share_one_value_across_threads() {
        let a = Shared::new(1u64);
        let b = a.clone();
        std::thread::spawn(move || b.set(b.get() + 41))
            .join()
            .unwrap();
        assert_eq!(a.get(), 42);
    }
}
