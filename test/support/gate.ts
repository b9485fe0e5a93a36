/** A promise the test opens when it chooses: what a held store write or a pending reserve looks like to the code under test. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
