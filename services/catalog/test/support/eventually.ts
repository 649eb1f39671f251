/** Retries `check` until it stops throwing, for effects that arrive through the log; bounded by `timeoutMs`. */
export const eventually = async <T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
};
