/** Row types of the tables, as pg returns them (numeric columns as strings, never floats). */

export type Role = 'USER' | 'ADMIN';

export interface UserRow {
  id: string;
  email: string;
  username: string;
  name: string;
  password_hash: string;
  role: Role;
  created_at: Date;
  updated_at: Date;
}

export interface BalanceRow {
  user_id: string;
  cash: string;
  reserved: string;
}

export type UserWithBalanceRow = UserRow & Pick<BalanceRow, 'cash' | 'reserved'> & { position_created_at: string };
