/** A spinner on stderr while something takes time; silent when stderr is not a terminal (logs, pipes). */
export function spinner(text: () => string): { stop(final?: string): void } {
  if (!process.stderr.isTTY) return { stop: () => undefined };
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let frame = 0;
  const draw = () => process.stderr.write(`\r\x1b[2K${frames[frame++ % frames.length]} ${text()}`);
  draw();
  const timer = setInterval(draw, 100);
  return {
    stop(final) {
      clearInterval(timer);
      process.stderr.write(`\r\x1b[2K${final ? `${final}\n` : ''}`);
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
