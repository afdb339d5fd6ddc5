// The part of node-zookeeper-client's API that bench/clients.ts uses (the package ships no types).
declare module 'node-zookeeper-client' {
  type Callback<T = unknown> = (error: Error | null, value?: T) => void;
  interface Client {
    connect(): void;
    close(): void;
    once(event: 'connected', listener: () => void): this;
    getData(path: string, callback: Callback<Buffer>): void;
    setData(path: string, data: Buffer, version: number, callback: Callback): void;
    create(path: string, data: Buffer, mode: number, callback: Callback<string>): void;
    remove(path: string, version: number, callback: Callback): void;
  }
  const zookeeper: {
    createClient(connectString: string, options?: { sessionTimeout?: number; spinDelay?: number; retries?: number }): Client;
    CreateMode: { PERSISTENT: number };
    Exception: { NODE_EXISTS: number };
  };
  export default zookeeper;
}
