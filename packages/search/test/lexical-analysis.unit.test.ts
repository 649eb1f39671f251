import { describe, expect, it } from '@jest/globals';
import { indexTerms, queryTerms } from '../src/lexical-analysis.js';

describe('indexTerms', () => {
  it('folds case and accents and splits on spaces and punctuation', () => {
    expect(indexTerms('Crème BRÛLÉE torch; (new)')).toEqual(['creme', 'brulee', 'torch', 'new']);
  });

  it('indexes a compound whole and by its parts', () => {
    expect(indexTerms('Core i5-8250U')).toEqual(['core', 'i58250u', 'i5', '8250u']);
    expect(indexTerms('USB-C/HDMI')).toEqual(['usbchdmi', 'usb', 'c', 'hdmi']);
  });

  it('keeps a decimal number together and drops thousands separators', () => {
    expect(indexTerms('15.6-inch, 2.4GHz, 1,000 units')).toEqual([
      '15.6inch',
      '15.6',
      'inch',
      '2.4ghz',
      '1000',
      'unit',
    ]);
  });

  it('singularises alphabetic words of four letters or more, and nothing else', () => {
    expect(indexTerms('batteries boxes knives mice gps cds PS4s')).toEqual([
      'battery',
      'box',
      'knife',
      'mouse',
      'gps',
      'cds',
      'ps4s',
    ]);
  });

  it('drops function words and apostrophes inside words', () => {
    expect(indexTerms("The men's jackets, for the winter")).toEqual(['men', 'jacket', 'winter']);
  });

  it('keeps the parts of a compound that are not function words', () => {
    expect(indexTerms('state-of-the-art')).toEqual(['stateoftheart', 'state', 'art']);
  });
});

describe('queryTerms', () => {
  it('gives one term per word, with the parts of a compound beside its whole', () => {
    expect(queryTerms('Sony WH-1000XM4 for kids')).toEqual([
      { whole: 'sony', parts: [] },
      { whole: 'wh1000xm4', parts: ['wh', '1000xm4'] },
      { whole: 'kid', parts: [] },
    ]);
  });

  it('gives each term once', () => {
    expect(queryTerms('Chairs chair CHAIR')).toEqual([{ whole: 'chair', parts: [] }]);
  });

  it('gives nothing for function words and punctuation', () => {
    expect(queryTerms(' the ... of !! ')).toEqual([]);
  });
});
