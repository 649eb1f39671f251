import { AppError } from '@marketplace/platform';

/** 'ok', or the AppError kind the work failed with (anything else is rethrown). */
export const kindOf = async (work: Promise<unknown>): Promise<string> => {
  try {
    await work;
    return 'ok';
  } catch (error) {
    if (error instanceof AppError) return error.kind;
    throw error;
  }
};
