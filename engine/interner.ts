// Interns strings to dense integer ids so the store and the thread protocol carry numbers, not strings.

export class Interner {
  private readonly ids = new Map<string, number>();
  private readonly names: string[] = [];

  id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.ids.set(name, id);
    }
    return id;
  }

  /** id of a known name, or -1 */
  peek(name: string): number {
    const id = this.ids.get(name);
    return id === undefined ? -1 : id;
  }

  name(id: number): string {
    return this.names[id];
  }

  get size(): number {
    return this.names.length;
  }
}
