import type { Signal } from "solid-js";
import { createStore, reconcile, unwrap } from "solid-js/store";

/**
 * Storage for `createResource` (its `storage` option) that merges each new value into the
 * last one, items matched by `id`: an item that is still there keeps its identity and only
 * its changed fields update. A list refreshed on a timer then keeps its rows, and the row
 * that holds the keyboard focus keeps it, instead of being built anew at every refresh.
 */
export function reconciledStorage<T>(initial: T | undefined): Signal<T | undefined> {
  const [store, setStore] = createStore<{ value: T | undefined }>({ value: initial });
  const read = () => store.value;
  const write = (next: unknown) => {
    const value =
      typeof next === "function" ? (next as (previous: T | undefined) => T | undefined)(unwrap(store).value) : (next as T | undefined);
    setStore("value", reconcile(value, { key: "id" }));
    return store.value;
  };
  return [read, write] as Signal<T | undefined>;
}
